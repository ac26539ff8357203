"""Cross-key checks of the typed stack config: rules GKE, Kueue, KAI or the operators would enforce
only after a long ``pulumi up`` (or never), run on the config before any resource exists.  One
module per area; ``queue_layer`` gathers the queue layer's."""
