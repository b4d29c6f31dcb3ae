// Command linoone is Linoone's local and self-hosted binary and producer CLI:
//
//	linoone serve          run the resolver, the management API and local Persist
//	linoone shorten URL    issue a short URL through the management API (SigV4-signed)
//	linoone inspect TOKEN  where a short URL goes, without a click (SigV4-signed)
//	linoone stats TOKEN    a short URL's clicks per day (SigV4-signed)
//	linoone dlq            list the click facts waiting in the local click DLQ
//	linoone replay         republish the local click DLQ onto the local bus
//	linoone recover …      republish the click facts a serve log holds whole
//	linoone consume        deliver the local bus into Persist apart from serve
//	linoone block RULE     add a rule to the local deny list (unblock removes it)
//	linoone blocked        list the local deny list, or --check URL against it
//	linoone console        a loopback web console that signs for the operator
//	linoone discover …     decide how the resolver is reached on AWS (read-only)
//	linoone capacity …     capacity, latency and cost model of the AWS deployment
//	linoone smoke …        check a deployed environment from outside and time it
//	linoone version        module version and VCS revision of this build
//
// Every command answers -h/--help with its usage and an example (exit 0), and a
// command line it cannot run with the usage on stderr (exit 2).
// main only wires: configuration comes from the environment, and everything runs in
// run, which tests call directly.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/linoone/linoone/internal/app/serve"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), serve.StopSignals()...)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: linoone <command> [arguments]

commands:
  serve                 run resolver (:8080), management API (:8081) and local Persist (:8082)
  shorten URL           issue a short URL; prints it
  inspect TOKEN|URL     where a short URL goes, when it was stored, whether it is blocked (no click)
  links [--query Q]     list short URLs, newest first, and search them
  qr TOKEN|URL          print a short URL's QR code in the terminal (--svg/--png FILE)
  stats TOKEN|URL       clicks per UTC day (default the last 30) and of all time
  status                whether serve answers, and the clicks waiting for delivery or in the DLQ
  dlq                   list click facts waiting in the local click DLQ
  replay                republish the local click DLQ; prints how many were replayed
  recover --from-log F  republish the click facts in log F (serve log, refused.jsonl, facts.jsonl)
  consume [--drain]     deliver the local bus into Persist (with LINOONE_CONSUMER=external)
  block RULE            deny-list a host, '*.domain' or URL prefix (serve applies it within 2 s)
  unblock RULE          remove a rule from the deny list
  blocked [--check URL] list the deny list's rules, or say whether URL is blocked and by which rule
  console [--open]      a web console on loopback that signs management calls for you
  discover --domain D   infrastructure discovery for a custom domain (read-only, AWS)
  capacity [--avg N …]  capacity, latency and cost model of the AWS deployment (docs/capacity.md)
  smoke …               check a deployed environment from outside (--from-terraform DIR); time it
  version               module version and VCS revision of this build

'linoone <command> -h' describes a command; flags may come before or after arguments.
configuration is read from LINOONE_* environment variables; see README.md.

example:
  linoone serve &
  url=$(linoone shorten https://example.com/) && curl -i "$url"
`

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] != "help" && !strings.HasPrefix(args[1], "-") {
			return run(ctx, []string{args[1], "--help"}, getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "serve":
		err = serveCmd(ctx, args[1:], getenv, stderr)
	case "shorten":
		err = shortenCmd(ctx, args[1:], getenv, stdout, stderr)
	case "inspect":
		err = inspectCmd(ctx, args[1:], getenv, stdout)
	case "links":
		err = linksCmd(ctx, args[1:], getenv, stdout)
	case "qr":
		err = qrCmd(ctx, args[1:], getenv, stdout)
	case "stats":
		err = statsCmd(ctx, args[1:], getenv, stdout)
	case "consume":
		err = consumeCmd(ctx, args[1:], getenv, stdout, stderr)
	case "status":
		err = statusCmd(ctx, args[1:], getenv, stdout)
	case "dlq":
		err = dlqCmd(ctx, args[1:], getenv, stdout)
	case "replay":
		err = replayCmd(ctx, args[1:], getenv, stdout, stderr)
	case "recover":
		err = recoverCmd(ctx, args[1:], getenv, stdout, stderr)
	case "block", "unblock":
		err = blockCmd(args[0], args[1:], getenv, stdout)
	case "blocked":
		err = blockedCmd(args[1:], getenv, stdout, stderr)
	case "console":
		err = consoleCmd(ctx, args[1:], getenv, stdout, stderr)
	case "discover":
		return discoverCmd(ctx, args[1:], getenv, stdout, stderr)
	case "capacity":
		return capacityCmd(args[1:], stdout, stderr)
	case "smoke":
		err = smokeCmd(ctx, args[1:], getenv, stdout)
	case "version", "--version", "-v":
		err = versionCmd(args[1:], stdout)
	case serve.ChildCommand: // not in the usage: serve runs it
		err = persistChildCmd(args[1:], getenv, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "linoone: unknown command %q%s\n%sRun 'linoone -h' for the commands.\n", args[0], suggest(args[0]), synopsis("linoone"))
		return 2
	}
	name := args[0]
	if strings.HasPrefix(name, "-") {
		name = "version"
	}
	return commandResult(name, err, stdout, stderr)
}
