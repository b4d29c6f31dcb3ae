// Package aws groups the adapters that exist only on AWS: click facts published
// to EventBridge (eventbridge), the SQS click dead-letter queue (clickdlq), the
// replay of that queue (replay) and CloudWatch embedded metrics (metrics). Each
// implements a port core/ declares, with the AWS SDK behind it. Packages under
// aws/ may import core/ and foundation/, never local/ (TestImportRules): local
// mode's stand-ins live there and the two never meet but in app/.
package aws
