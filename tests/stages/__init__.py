"""The stage API (delaycv.stages): the command line and the workflow write the same files."""
