# The click DLQ pair: the resolver sends a graph fact it could not publish to the
# click DLQ; the replay function consumes it (partial batch failures) and leaves
# what it cannot republish to SQS redrive, which moves a message to the deadletter
# queue after maxReceiveCount receives, chosen so that this happens only once the
# click DLQ's retention has passed. The deadletter queue alarms (alarms module);
# `linoone dlq redrive` moves its messages back (terraform/README.md, "Runbook").

locals {
  # A click must stay in the click DLQ for its whole retention, however long the bus
  # is down: redrive moves it to the deadletter queue only after maxReceiveCount
  # receives, and a failed replay receives it again once per visibility timeout, so
  # maxReceiveCount × visibility timeout must cover the retention. The visibility
  # timeout is at least 6 times the replay timeout (the AWS recommendation for Lambda
  # SQS sources), and longer when SQS's limit of 1000 receives would not cover the
  # retention otherwise; maxReceiveCount is then what covers it.
  max_receive_count_limit    = 1000
  visibility_timeout_seconds = max(6 * var.replay_timeout_seconds, ceil(var.message_retention_seconds / local.max_receive_count_limit))
  max_receive_count          = ceil(var.message_retention_seconds / local.visibility_timeout_seconds)
}

resource "aws_sqs_queue" "deadletter" {
  name                      = "${var.name}-deadletter"
  message_retention_seconds = var.deadletter_message_retention_seconds
  sqs_managed_sse_enabled   = true

  lifecycle {
    # A cross-variable rule: variable validation may not read other variables
    # before Terraform 1.9, so it is checked here.
    precondition {
      condition     = var.deadletter_message_retention_seconds > var.message_retention_seconds
      error_message = "deadletter_message_retention_seconds (${var.deadletter_message_retention_seconds}) must be longer than message_retention_seconds (${var.message_retention_seconds}): a redriven message keeps its original enqueue time."
    }
  }
}

resource "aws_sqs_queue" "this" {
  name                       = var.name
  message_retention_seconds  = var.message_retention_seconds
  visibility_timeout_seconds = local.visibility_timeout_seconds
  sqs_managed_sse_enabled    = true

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.deadletter.arn
    maxReceiveCount     = local.max_receive_count
  })

  lifecycle {
    precondition {
      condition     = local.visibility_timeout_seconds <= 43200 && local.max_receive_count <= local.max_receive_count_limit
      error_message = "replay_timeout_seconds (${var.replay_timeout_seconds}) and message_retention_seconds (${var.message_retention_seconds}) need a visibility timeout of ${local.visibility_timeout_seconds} s (at most 43200) and ${local.max_receive_count} receives (at most 1000)."
    }
  }
}

# Both queues refuse every request not made over TLS, whoever makes it.
data "aws_iam_policy_document" "tls_only" {
  for_each = {
    this       = aws_sqs_queue.this.arn
    deadletter = aws_sqs_queue.deadletter.arn
  }

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["sqs:*"]
    resources = [each.value]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_sqs_queue_policy" "this" {
  queue_url = aws_sqs_queue.this.id
  policy    = data.aws_iam_policy_document.tls_only["this"].json
}

resource "aws_sqs_queue_policy" "deadletter" {
  queue_url = aws_sqs_queue.deadletter.id
  policy    = data.aws_iam_policy_document.tls_only["deadletter"].json
}

# Only the click DLQ may redrive into its deadletter queue.
resource "aws_sqs_queue_redrive_allow_policy" "deadletter" {
  queue_url = aws_sqs_queue.deadletter.id

  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [aws_sqs_queue.this.arn]
  })
}

resource "aws_lambda_event_source_mapping" "this" {
  event_source_arn                   = aws_sqs_queue.this.arn
  function_name                      = var.replay_function_name
  batch_size                         = var.batch_size
  maximum_batching_window_in_seconds = var.maximum_batching_window_seconds
  function_response_types            = ["ReportBatchItemFailures"]

  # Replay shares the account's concurrency (and the bus) with the resolver: during an
  # outage it must not take more than this many concurrent executions.
  scaling_config {
    maximum_concurrency = var.maximum_concurrency
  }

  lifecycle {
    precondition {
      condition     = var.batch_size <= 10 || var.maximum_batching_window_seconds >= 1
      error_message = "A batch_size above 10 needs maximum_batching_window_seconds of at least 1."
    }
  }
}
