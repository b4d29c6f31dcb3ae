// Package e2e is Linoone's end-to-end deployment suite: one set of assertions,
// written against the Deployment interface, run against `linoone serve` on loopback
// (local_test.go, part of `make test`) and against a real sandbox stack built with
// Terraform through terratest (aws_test.go, build tag aws, `make e2e-aws`).
//
// It is its own module so that terratest's dependency tree stays out of the service;
// it imports only the service's public packages (the generated api clients).
package e2e
