"""MultiKueue across clusters (issue 33): a manager's quota, its dispatcher, each worker's own
admission and DWS capacity, simulated on one clock (:mod:`whatif.multikueue.run`)."""
