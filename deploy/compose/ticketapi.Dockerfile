# The legacy ticket API (test/ticketapi), the upstream of the Compose and
# Kubernetes examples. deploy/build.sh compiles it first, like signpost; the
# build context holds only the binary, named ticketapi.
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="signpost-ticketapi" \
      org.opencontainers.image.description="A legacy ticket API that answers mistakes with bare errors, to put signpost in front of" \
      org.opencontainers.image.version="${VERSION}"
COPY ticketapi /ticketapi
USER 65532:65532
EXPOSE 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/ticketapi", "healthcheck", "--url", "http://127.0.0.1:8081/tickets/T-8841"]
ENTRYPOINT ["/ticketapi"]
CMD ["--listen", ":8081"]
