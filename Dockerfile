# idserver image: built with the same Makefile as everywhere, on Debian 12.
FROM debian:12 AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc make pkg-config libc6-dev libmariadb-dev libevent-dev libinih-dev libjansson-dev libssl-dev \
        libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY src ./src
COPY common ./common
COPY proto ./proto
COPY lib ./lib
COPY include ./include
COPY cli ./cli
COPY docs/openapi.json ./docs/openapi.json
RUN make build/idserver build/idgen

FROM debian:12-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libmariadb3 libevent-2.1-7 libevent-openssl-2.1-7 libssl3 libinih1 libjansson4 \
        libnghttp2-14 libprotobuf-c1 openssl ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --no-create-home idgen \
    && mkdir -p /var/lib/idgen && chown idgen: /var/lib/idgen
COPY --from=build /src/build/idserver /usr/local/bin/idserver
# The idgen command (libidgen linked in): docker compose exec idserver idgen id
COPY --from=build /src/build/idgen /usr/local/bin/idgen
# The certificates of docker-compose.yml, made by its tls service (openssl above).
COPY scripts/compose-tls.sh /usr/local/bin/compose-tls.sh
# The state file (high-water marks, the lease) lives here: keep it on a volume.
VOLUME /var/lib/idgen
USER idgen
EXPOSE 4242 4243 4244
ENTRYPOINT ["/usr/local/bin/idserver"]
