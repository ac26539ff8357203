"""Fair sharing as Kueue v0.19.2 does it: shares, the admission tournament, fair preemption."""
