"""Upgrades planned from records (issue 28, item 5).

``records/<component>.json`` holds one component's transition records in the shape of NVIDIA
aicr's ``ComponentUpgrades`` (issue 28: transitions with from/to version ranges, a
``safe``/``manual``/``blocked`` verdict, ordered steps and references to upstream changelog
lines); :mod:`.records` loads and checks them.  :mod:`.charts` computes, from the two charts
themselves, what a reviewer must know about a chart version change: values keys the target no
longer reads (Helm ignores them silently), CRD versions that stop being served and properties the
target CRD removes (with the plan's objects that use them), and defaults that flip under a stack
that does not pin them.  :mod:`.section` writes the Markdown section.
"""
