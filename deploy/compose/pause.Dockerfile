# Holds the Compose project's network namespace (deploy/compose/pause), as a
# Kubernetes pod's pause container does. Built by deploy/build.sh; the build
# context holds only the binary, named pause.
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="signpost-pause" \
      org.opencontainers.image.version="${VERSION}"
COPY pause /pause
USER 65532:65532
ENTRYPOINT ["/pause"]
