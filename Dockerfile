# history-server in a container: how to run the server where it cannot run
# natively (it is Linux only, on epoll), e.g. on a Mac with Docker Desktop,
# OrbStack or Podman. scripts/check_container_build.sh builds the binary the
# way the build stage below does (11 minutes on 2 cores) and checks it runs
# with only the run stage's libraries and as the image's environment says;
# CI runs the same checks on its test build (--no-build), the release build
# being too long for it.
#
#   docker build -t chat-history .
#
# SQLite (the default): the database in the volume /data. In a container the
# server listens on 0.0.0.0, which it allows only in tokens mode: give it a
# key file ("KID SECRET" lines, README's Identity).
#
#   printf 'dev %s\n' "$(openssl rand -hex 32)" > dev.keys
#   docker run --rm -p 127.0.0.1:8080:8080 -v history-data:/data \
#       -v "$PWD/dev.keys:/run/secrets/history.keys:ro" \
#       -e HISTORY_JWT_HS256_SECRET_FILE=/run/secrets/history.keys chat-history
#
# (For a development server without tokens, published on the Mac's loopback
# only: -p 127.0.0.1:8080:8080 -e HISTORY_INSECURE_NO_AUTH=on instead of the key.)
#
# PostgreSQL: any number of containers on one database (docs/several-instances.md):
#
#   docker run --rm -p 127.0.0.1:8081:8080 -e HISTORY_JWT_HS256_SECRET_FILE=/run/secrets/history.keys \
#       -v "$PWD/dev.keys:/run/secrets/history.keys:ro" chat-history \
#       --database 'postgresql://history:SECRET@host.docker.internal/history'
#
# Every flag is also an environment variable (history-server --help).

# The build stage: the official Swift image, the headers of SQLite, libpq and zlib,
# and the Swift runtime and Foundation linked in statically, so the run stage
# needs neither.
FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev libpq-dev zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN swift build -c release --static-swift-stdlib --product history-server \
    && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/history-server" /usr/local/bin/history-server

# The run stage: Debian with the two C libraries the server links.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-0 libpq5 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /data --shell /usr/sbin/nologin history \
    && install -d -o history -g history /data
COPY --from=build /usr/local/bin/history-server /usr/local/bin/history-server
USER history
VOLUME /data
ENV HISTORY_HOST=0.0.0.0 \
    HISTORY_PORT=8080 \
    HISTORY_DATABASE=/data/history.sqlite
EXPOSE 8080
# SIGTERM (docker stop) drains gracefully within 5 s.
ENTRYPOINT ["history-server"]
