# slogate's container image: a static binary on distroless, running as the
# non-root user, with the specs of specs/ in /specs. CI jobs and Kubernetes
# (examples/kubernetes) pull it; see docs/ci.md.
#   docker build -t slogate --build-arg VERSION=$(git describe --always) .
#   docker run --rm slogate run -endpoint http://vllm:8000 /specs/qwen3.5-4b-h200-dflash.hcl

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/slogate ./cmd/slogate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/slogate /usr/local/bin/slogate
COPY specs/ /specs/
# The specs read env("HOME"); the nonroot user's home.
ENV HOME=/home/nonroot
WORKDIR /home/nonroot
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/slogate"]
