# The click DLQ pair: the resolver sends a graph fact it could not publish to the
# click DLQ; the replay function consumes it (partial batch failures) and leaves
# what it cannot republish to SQS redrive, which moves a message to the deadletter
# queue after maxReceiveCount receives. The deadletter queue alarms (alarms module).

locals {
  # AWS recommends at least 6 times the function timeout for Lambda SQS sources.
  visibility_timeout_seconds = 6 * var.replay_timeout_seconds
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
    maxReceiveCount     = var.max_receive_count
  })
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

  lifecycle {
    precondition {
      condition     = var.batch_size <= 10 || var.maximum_batching_window_seconds >= 1
      error_message = "A batch_size above 10 needs maximum_batching_window_seconds of at least 1."
    }
  }
}
