"""The offline preview: run a stack's real program under the Pulumi SDK mocks, record every
registration in wire form, write the plan and manifests, and run the policy pack over the
analyzer protocol -- with no Pulumi CLI, no cloud account and no cluster."""
