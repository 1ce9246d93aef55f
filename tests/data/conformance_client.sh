#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios, each as one run of
# `structs-console client`. The suite runs this script with its test server's URL as
# the last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO; the binary
# comes from STRUCTS_CONSOLE_BIN. Driven by tests/client.rs, for both suites.
set -u
bin="${STRUCTS_CONSOLE_BIN:?set STRUCTS_CONSOLE_BIN to the structs-console binary}"
url="${!#}"
extra=()
# A protocol version to offer instead of the newest (the suite predates it).
[ -n "${CLIENT_PROTOCOL:-}" ] && extra+=(--protocol-version "$CLIENT_PROTOCOL")
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  initialize)
    exec "$bin" client "${extra[@]}" --connect "$url" tools ;;
  tools_call)
    exec "$bin" client "${extra[@]}" --connect "$url" call add_numbers --args '{"a": 2, "b": 3}' ;;
  elicitation-sep1034-client-defaults)
    exec "$bin" client "${extra[@]}" --elicitation accept-defaults --connect "$url" \
      call test_client_elicitation_defaults ;;
  sse-retry)
    exec "$bin" client "${extra[@]}" --connect "$url" call test_reconnection ;;
  request-metadata)
    exec "$bin" client "${extra[@]}" --connect "$url" tools ;;
  sep-2322-client-request-state)
    # The four tools of the scenario in one session; the retries carry the state.
    printf '%s\n' "call test_mrtr_echo_state" "call test_mrtr_no_state" \
      "call test_mrtr_unrelated" "call test_mrtr_no_result_type" |
      exec "$bin" client "${extra[@]}" --elicitation accept-defaults --connect "$url" session - ;;
  http-standard-headers)
    # A request of each kind whose headers the scenario checks, in one session.
    printf '%s\n' "tools" "call test_headers" "call my-hyphenated-tool" "resources" \
      "read 'file:///path/to/file%20name.txt'" "prompts" "prompt test_prompt" |
      exec "$bin" client "${extra[@]}" --connect "$url" session - ;;
  http-custom-headers)
    # The tool list, then the scenario's calls (from MCP_CONFORMANCE_CONTEXT) in one
    # session: the client mirrors each x-mcp-header argument into its Mcp-Param-*
    # header, Base64 where the value needs it.
    python3 -c '
import json, os, shlex
print("tools")
for call in json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["toolCalls"]:
    print("call", call["name"], "--args", shlex.quote(json.dumps(call["arguments"])))' |
      exec "$bin" client "${extra[@]}" --connect "$url" session - ;;
  http-invalid-tool-headers)
    # Every tool the client lists is called: a tool whose x-mcp-header annotations
    # are invalid must not be among them, and the valid one must.
    tools=$("$bin" client "${extra[@]}" --connect "$url" tools) || exit 1
    printf '%s' "$tools" | python3 -c '
import json, shlex, sys
for tool in json.load(sys.stdin)["tools"]:
    args = {k: "x" for k in tool["inputSchema"].get("required", [])}
    print("call", tool["name"], "--args", shlex.quote(json.dumps(args)))' |
      exec "$bin" client "${extra[@]}" --connect "$url" session - ;;
  json-schema-ref-no-deref)
    # The tool list, whose schema points at a network $ref (the scenario's server
    # serves nothing else): the client must not fetch it.
    exec "$bin" client "${extra[@]}" --connect "$url" tools ;;
  json-schema-2020-12-preservation)
    # The focal tool's inputSchema, as the client received it, echoed back verbatim.
    schema=$("$bin" client "${extra[@]}" --connect "$url" tools | python3 -c '
import json, sys
tools = json.load(sys.stdin)["tools"]
focal = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")
print(json.dumps({"schema": focal["inputSchema"]}))') || exit 1
    exec "$bin" client "${extra[@]}" --connect "$url" call json_schema_echo --args "$schema" ;;
  sep-2640-client-no-prefetch)
    # The skills listed: nothing of them is read until one is loaded.
    exec "$bin" client "${extra[@]}" --connect "$url" skills ;;
  sep-2640-client-verify-*)
    # The scenario's one skill loaded: its SKILL.md is checked against its entry, and a
    # mismatch refuses the skill (exit 1) before any other file is read.
    exec "$bin" client "${extra[@]}" --connect "$url" skill pdf-processing ;;
  auth/*)
    # What a user does: list the tools and call the scenario's one tool, in one
    # session, authorizing as the server asks (the suite's servers authorize without
    # a person, so the client fetches the authorization URL itself). The context
    # gives what the operator would: pre-registered credentials, a key, a workload
    # token, an enterprise IdP; the scenario says which grant.
    oauth=(--oauth fetch --oauth-client-metadata-url https://conformance-test.local/client-metadata.json)
    ctx="${MCP_CONFORMANCE_CONTEXT:-}"
    field() { printf '%s' "$ctx" | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1]) or "")' "$1"; }
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    if [ -n "$ctx" ]; then
      [ -n "$(field client_id)" ] && oauth+=(--oauth-client-id "$(field client_id)")
      [ -n "$(field issuer)" ] && oauth+=(--oauth-issuer "$(field issuer)")
      [ -n "$(field client_secret)" ] && export STRUCTS_CONSOLE_OAUTH_CLIENT_SECRET="$(field client_secret)"
      if [ -n "$(field private_key_pem)" ]; then
        field private_key_pem > "$dir/key.pem"
        oauth+=(--oauth-private-key "$dir/key.pem")
      fi
      if [ -n "$(field valid_jwt)" ]; then
        field valid_jwt > "$dir/assertion.jwt"
        oauth+=(--oauth-grant jwt-bearer --oauth-assertion-file "$dir/assertion.jwt")
      fi
      if [ -n "$(field idp_id_token)" ]; then
        field idp_id_token > "$dir/id.jwt"
        oauth+=(--oauth-grant enterprise --oauth-id-token-file "$dir/id.jwt"
          --oauth-idp-token-endpoint "$(field idp_token_endpoint)"
          --oauth-idp-client-id "$(field idp_client_id)")
      fi
    fi
    case "$MCP_CONFORMANCE_SCENARIO" in
      auth/client-credentials-*) oauth+=(--oauth-grant client-credentials) ;;
    esac
    # The suite starts every scenario at once. The authorization ones start 2 s late,
    # so that the one timed scenario (sse-retry: a reconnect at most 200 ms late, done
    # within a second) does not share a small machine with twenty authorizations.
    sleep 2
    if [ -z "${OAUTH_BROWSER:-}" ]; then
      printf '%s\n' tools "call test-tool" |
        "$bin" client "${extra[@]}" "${oauth[@]}" --connect "$url" session -
      exit
    fi
    # OAUTH_BROWSER=1: the way a person authorizes, with curl for the browser. The
    # client prints the authorization URL on stderr; curl opens it and follows its
    # redirect back to the client's loopback listener.
    oauth[1]=browser
    mkfifo "$dir/stderr"
    (
      while IFS= read -r line; do
        printf '%s\n' "$line" >&2
        case "$line" in "  http"*) curl -sL -o /dev/null "${line#  }" & ;; esac
      done < "$dir/stderr"
      wait
    ) &
    printf '%s\n' tools "call test-tool" |
      "$bin" client "${extra[@]}" "${oauth[@]}" --connect "$url" session - 2> "$dir/stderr"
    status=$?
    wait
    exit "$status" ;;
  *)
    echo "conformance_client.sh: no mapping for scenario '${MCP_CONFORMANCE_SCENARIO:-}'" >&2
    exit 2 ;;
esac
