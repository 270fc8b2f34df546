"""MOA classifiers as learners (delaycv.jvm), against MOA's own task."""
