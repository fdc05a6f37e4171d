# nginx for deploy/compose.yaml: Debian's nginx running deploy/nginx.conf, as a non-root user, with
# the file's replica addresses and listen address rewritten for the compose network (the same
# rewrite test/helpers/deploy.ts makes for the tests' loopback ports). Build from the repository root.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null \
  && apt-get clean && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/* \
  && mkdir -p /var/lib/tessera-nginx/logs && ln -s /dev/stdout /var/lib/tessera-nginx/logs/access.log \
  && ln -s /dev/stderr /var/lib/tessera-nginx/logs/error.log \
  && chown -R www-data:www-data /var/lib/tessera-nginx /var/lib/nginx
COPY deploy/nginx.conf /etc/tessera/nginx.conf
RUN sed -i -e 's/server 127\.0\.0\.1:8001 /server tessera-1:8000 /' -e 's/server 127\.0\.0\.1:8002 /server tessera-2:8000 /' \
      -e 's/listen 127\.0\.0\.1:8080;/listen 8080;/' /etc/tessera/nginx.conf \
  && grep -q 'server tessera-2:8000 ' /etc/tessera/nginx.conf && grep -q 'listen 8080;' /etc/tessera/nginx.conf
USER www-data
EXPOSE 8080
STOPSIGNAL SIGQUIT
CMD ["nginx", "-p", "/var/lib/tessera-nginx", "-c", "/etc/tessera/nginx.conf", "-g", "daemon off;"]
