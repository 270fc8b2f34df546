"""What a run means (delaycv.protocol): policies, validation, learner specs, run settings."""
