"""The merge stage and run directories (delaycv.tables): run directories, merges, costs, the
MOA export."""
