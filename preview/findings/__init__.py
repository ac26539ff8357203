"""Findings where reviewers look: one ``findings.json`` per stack, located on the stack file's lines.

``document`` builds ``build/<stack>/findings.json`` (the single source), ``origins`` maps each
resource to the config key path that produced it, ``locate`` maps a key path to its 1-based line
and column in ``Pulumi.<stack>.yaml`` (or ``charts.lock.yaml`` / ``Pulumi.yaml``), and ``sarif``
turns the document into SARIF 2.1.0 for GitHub code scanning.
"""
