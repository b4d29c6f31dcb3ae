# tflint configuration for the Terraform under terraform/.
#
# Built-in rules only: the terraform ruleset is bundled into the tflint binary, so no
# `tflint --init` (and no download) is needed. The AWS ruleset plugin is not used
# because plugins cannot be downloaded here. Install with scripts/install-tflint.sh;
# run as documented in terraform/README.md.

config {
  # Evaluate calls of local modules (../../modules/…) in place; no `terraform init`.
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
