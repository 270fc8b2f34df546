"""The study as the workflow runs it (delaycv.study): the config loaded and checked, the code
digests."""
