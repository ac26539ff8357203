"""gpu-batch: a GKE GPU batch platform with gang scheduling under team quotas."""

from stacks.compose import build
from stacks.loader import load_stack_config, require_gcp_project

build(load_stack_config(), project=require_gcp_project())
