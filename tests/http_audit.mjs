// GraphQL-over-HTTP conformance audit of a running server.
//
//   node tests/http_audit.mjs http://127.0.0.1:8000/graphql
//
// Runs graphql-http's server audits (the checks of the GraphQL over HTTP spec, each named
// after its requirement level: MUST, SHOULD or MAY) against the URL and prints one JSON
// array on stdout, one object per audit:
//   {id, name, status: "ok" | "warn" | "error" | "notice", reason?, response?}
// where a failing audit carries graphql-http's reason and the HTTP status, content type and
// (shortened) body of the response that failed it. A failing MUST is "error", a failing
// SHOULD "warn", a failing MAY "notice".
//
// Exit status: 0 when no MUST audit fails, 1 when one does, 2 on a usage or fatal error.

import { auditServer } from 'graphql-http';

const BODY_LIMIT = 500;

async function describeResponse(response) {
  if (!response) return undefined;
  let body;
  try {
    body = await response.text();
  } catch {
    body = undefined; // the audit already read it
  }
  if (body !== undefined && body.length > BODY_LIMIT) {
    body = `${body.slice(0, BODY_LIMIT)}...`;
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body,
  };
}

async function main(argv) {
  const url = argv[0];
  if (!url || argv.length !== 1) {
    process.stderr.write('usage: node tests/http_audit.mjs <graphql endpoint URL>\n');
    return 2;
  }
  const results = await auditServer({ url });
  const report = [];
  for (const result of results) {
    const entry = { id: result.id, name: result.name, status: result.status };
    if (result.status !== 'ok') {
      entry.reason = result.reason;
      entry.response = await describeResponse(result.response);
    }
    report.push(entry);
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.some((r) => r.status === 'error') ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`audit failed: ${error?.stack ?? error}\n`);
    process.exitCode = 2;
  },
);
