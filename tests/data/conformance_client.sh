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
  *)
    echo "conformance_client.sh: no mapping for scenario '${MCP_CONFORMANCE_SCENARIO:-}'" >&2
    exit 2 ;;
esac
