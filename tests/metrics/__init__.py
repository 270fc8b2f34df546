"""The streaming metrics and estimators, MOA's measurements, the effort-aware measures
(delaycv.metrics)."""
