// Package ops groups what operators run beside the service rather than in it:
// infrastructure discovery for custom domains (discovery) and the capacity,
// latency and cost model of the AWS deployment (capacity). Packages under ops/
// import no other group of internal/ (TestImportRules); its go:generate commands
// read app/config's defaults.
package ops
