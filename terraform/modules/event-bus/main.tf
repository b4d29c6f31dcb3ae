# The shared engagement bus that GraphFactProduced click facts go to. Normally the
# bus already exists and is only looked up; a sandbox may create its own.

resource "aws_cloudwatch_event_bus" "this" {
  count = var.create_bus ? 1 : 0

  name = var.event_bus_name

  lifecycle {
    precondition {
      condition     = !startswith(var.event_bus_name, "arn:")
      error_message = "create_bus needs a bus name, not an ARN."
    }
  }
}

# DescribeEventBus accepts a name or an ARN.
data "aws_cloudwatch_event_bus" "this" {
  count = var.create_bus ? 0 : 1

  name = var.event_bus_name
}
