#!/usr/bin/env bash
# Runs a command (default: npm run test:e2e) against a Docker engine, making one when there is
# none: installs Debian's docker.io when dockerd is missing, starts dockerd itself when no engine
# answers, and makes deploy/Dockerfile's base image locally when it cannot be pulled
# (scripts/ci/local-base-image.sh). On exit, however the command ended, it removes every
# container, network and volume the e2e suite labelled, and stops the daemon it started.
# Usage: scripts/ci/with-docker.sh [COMMAND...]
set -euo pipefail
cd "$(dirname "$0")/../.."
LABEL=org.spoolmq.e2e
DOCKERD_START_TIMEOUT_S=60
DOCKERD_STOP_TIMEOUT_S=30
STARTED_S=$SECONDS
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
say() { echo "with-docker: $* ($((SECONDS - STARTED_S)) s)"; }

# Debian's client where it is installed: a newer client first in PATH may lack buildx, and
# the suite's image build goes through the engine's API anyway.
pick_client() {
  if [ -x /usr/bin/docker ]; then echo /usr/bin/docker; else command -v docker || true; fi
}
DOCKER=$(pick_client)
DOCKERD_PID=""
DOCKERD_LOG=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$DOCKER" ] && "$DOCKER" info >/dev/null 2>&1; then
    local ids
    ids=$("$DOCKER" ps -aq --filter "label=$LABEL")
    if [ -n "$ids" ]; then "$DOCKER" rm -f $ids >/dev/null; fi
    ids=$("$DOCKER" network ls -q --filter "label=$LABEL")
    if [ -n "$ids" ]; then "$DOCKER" network rm $ids >/dev/null; fi
    ids=$("$DOCKER" volume ls -q --filter "label=$LABEL")
    if [ -n "$ids" ]; then "$DOCKER" volume rm -f $ids >/dev/null; fi
    if [ -n "$DOCKERD_PID" ]; then
      # This script's own daemon: containers a failed image build left behind go too.
      "$DOCKER" container prune -f >/dev/null || true
    fi
    local left
    left=$( ( "$DOCKER" ps -aq --filter "label=$LABEL"; "$DOCKER" network ls -q --filter "label=$LABEL"
      "$DOCKER" volume ls -q --filter "label=$LABEL" ) | wc -l)
    if [ "$left" -ne 0 ]; then
      echo "with-docker: $left labelled containers, networks or volumes are left" >&2
      if [ "$status" -eq 0 ]; then status=1; fi
    fi
  fi
  if [ -n "$DOCKERD_PID" ]; then
    # Its children (containerd, shims) must end with it: checked below.
    local children
    children=$(pgrep -P "$DOCKERD_PID" | tr '\n' ' ' || true)
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq "$DOCKERD_STOP_TIMEOUT_S"); do
      kill -0 "$DOCKERD_PID" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$DOCKERD_PID" 2>/dev/null; then kill -KILL "$DOCKERD_PID" 2>/dev/null || true; fi
    for pid in $children; do
      for _ in $(seq "$DOCKERD_STOP_TIMEOUT_S"); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
      done
      if kill -0 "$pid" 2>/dev/null; then
        echo "with-docker: dockerd's child $pid ($(cat /proc/"$pid"/comm 2>/dev/null)) is left" >&2
        if [ "$status" -eq 0 ]; then status=1; fi
      fi
    done
    say "stopped the dockerd it started"
    if [ "$status" -ne 0 ] && [ -n "$DOCKERD_LOG" ]; then tail -n 20 "$DOCKERD_LOG" >&2 || true; fi
    rm -f "$DOCKERD_LOG"
  fi
  say "done, exit $status"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$DOCKER" ] && "$DOCKER" info >/dev/null 2>&1; then
  say "using the running Docker engine"
else
  if ! command -v dockerd >/dev/null 2>&1; then
    say "no dockerd: installing Debian's docker.io"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io >/dev/null
    DOCKER=$(pick_client)
  fi
  DOCKERD_LOG=$(mktemp /tmp/with-docker-dockerd.XXXXXX)
  $SUDO dockerd >"$DOCKERD_LOG" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq "$DOCKERD_START_TIMEOUT_S"); do
    if "$DOCKER" info >/dev/null 2>&1; then break; fi
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
      cat "$DOCKERD_LOG" >&2
      echo "with-docker: dockerd exited at start" >&2
      exit 1
    fi
    sleep 1
  done
  "$DOCKER" info >/dev/null
  say "started dockerd (pid $DOCKERD_PID)"
fi

DOCKER="$DOCKER" bash scripts/ci/local-base-image.sh
say "base image ready"
if [ "$#" -eq 0 ]; then set -- npm run test:e2e; fi
"$@"
