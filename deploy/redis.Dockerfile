# Redis for deploy/compose.yaml: Debian's redis-server as the replicas' shared tile cache, nothing
# persisted (a cache: losing it costs only tiles made again), least recently used tiles evicted.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
  && apt-get clean && rm -rf /var/lib/apt/lists/*
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no", \
     "--maxmemory", "512mb", "--maxmemory-policy", "allkeys-lru"]
