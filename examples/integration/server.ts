import {
  createCallbackClient,
  createRunTaskHandler,
  type CallbackFetch,
  type CallbackOutcome,
  type RunTaskRequest,
} from "../../src/integration/index.js";

/**
 * The bundled example run task integration, written with `runplane/integration`. It reports
 * `running` with one outcome, then `passed`, or `failed` with an error-level outcome when the run
 * message contains "fail" (any case), which makes both paths easy to try from the reference server.
 */
export interface ExampleIntegrationOptions {
  /** Must equal the run task's HMAC key; leave empty for a task without one. */
  hmacKey: string | null | undefined;
  fetch?: CallbackFetch;
  onError?: (error: unknown, request: RunTaskRequest) => void;
}

export function createExampleIntegration(options: ExampleIntegrationOptions): {
  handler: (request: Request) => Promise<Response>;
} {
  const callbacks = createCallbackClient(options.fetch === undefined ? {} : { fetch: options.fetch });

  const check = async (request: RunTaskRequest): Promise<void> => {
    await callbacks.send(request, {
      status: "running",
      message: "Reading the run message",
      outcomes: [inspected(request)],
    });
    if (request.run_message.toLowerCase().includes("fail")) {
      await callbacks.send(request, { status: "failed", message: "The run message asks for a failure", outcomes: [refused()] });
    } else {
      await callbacks.send(request, { status: "passed", message: "Nothing to report" });
    }
  };

  const handler = createRunTaskHandler({
    hmacKey: options.hmacKey,
    onRequest: check,
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return { handler };
}

const inspected = (request: RunTaskRequest): CallbackOutcome => ({
  outcomeId: "EXAMPLE-001",
  description: "Run inspected",
  body: [
    "## Run inspected",
    "",
    "| Field | Value |",
    "|---|---|",
    `| Workspace | \`${request.workspace_name}\` |`,
    `| Stage | \`${request.stage}\` |`,
    `| Enforcement | \`${request.task_result_enforcement_level}\` |`,
  ].join("\n"),
  url: request.run_app_url,
  tags: { Severity: [{ label: "Info", level: "info" }], Status: [{ label: "Inspected" }] },
});

const refused = (): CallbackOutcome => ({
  outcomeId: "EXAMPLE-002",
  description: 'The run message contains "fail"',
  body: "## Failure requested\n\nThis example fails every run whose message contains **fail**. Change the message to pass.",
  tags: { Severity: [{ label: "High", level: "error" }], Status: [{ label: "Failed", level: "error" }] },
});
