// Command floor is no Lambda function of ours and is never deployed: it is the bare
// aws-lambda-go runtime (lambda.Start with a handler that echoes its event), which
// TestLambdasUnderRIE (lambdas/rie_test.go) starts under the emulator beside the
// three functions. Its init is the floor of theirs on the same host and run: what
// the Go runtime, aws-lambda-go and the emulator cost before any code of ours, so
// that a function's figure reads as the floor plus what its own imports and setup add.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(_ context.Context, event json.RawMessage) (json.RawMessage, error) { return event, nil })
}
