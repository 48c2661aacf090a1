#!/usr/bin/env bash
# Builds signpost's images on the local Docker engine, pulling nothing: the
# binaries are compiled here, static (CGO_ENABLED=0), trimmed and stamped
# with `git describe`, then each is copied onto an empty (scratch) image.
#
#   deploy/build.sh [TAG]      TAG defaults to latest
#
# Images: signpost:TAG, and for the Compose example signpost-ticketapi:TAG
# (the legacy ticket API) and signpost-pause:TAG (its namespace holder).
# GOARCH defaults to the Docker engine's architecture.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:-latest}
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
arch=${GOARCH:-$(docker version --format '{{.Server.Arch}}')}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# image NAME PKG DOCKERFILE: compile PKG as $out/NAME/NAME, then build it.
image() {
	local name=$1 pkg=$2 dockerfile=$3 bin=${1#signpost-}
	mkdir -p "$out/$name"
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X main.version=$version" -o "$out/$name/$bin" "$pkg"
	docker build --quiet --build-arg "VERSION=$version" -t "$name:$tag" -f "$dockerfile" "$out/$name" >/dev/null
	echo "$name:$tag ($version, $(du -k "$out/$name/$bin" | cut -f1) KiB binary)"
}

image signpost ./cmd/signpost deploy/Dockerfile
image signpost-ticketapi ./cmd/ticketapi deploy/compose/ticketapi.Dockerfile
image signpost-pause ./deploy/compose/pause deploy/compose/pause.Dockerfile
