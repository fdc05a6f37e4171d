# tessera's container image: Debian 12, installed by the same scripts as a machine (scripts/install.sh).
#   podman build --format docker -t tessera .        (docker build -t tessera . works the same)
#   podman run -p 8000:8000 tessera
# Two stages: the build stage compiles gdal-async against Debian's GDAL and tsc's output; the image
# keeps only GDAL's runtime library, Node.js, the production npm packages and dist/.
# BASE lets a machine with no registry build from a local Debian image (scripts/container-base.sh makes
# one with debootstrap; test/container.test.ts builds with it); elsewhere the default is Debian's official image.
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS build
WORKDIR /opt/tessera
# Only what the installation reads, so this layer (the long one) is rebuilt only when they change.
COPY scripts/install.sh scripts/node.sh scripts/
COPY package.json package-lock.json ./
RUN TESSERA_INSTALL_BROWSER=0 bash scripts/install.sh && rm -rf /var/lib/apt/lists/* /root/.npm /root/.cache
COPY Makefile tsconfig.json ./
COPY src src
RUN make dist/.built && npm_config_update_notifier=false .tools/node/bin/npm prune --omit=dev --no-audit --no-fund --loglevel=error \
  && rm -rf /root/.npm
# gdal-async is linked to Debian's GDAL: the GDAL sources it bundles (deps/, ~220 MB), its C++ sources
# and build intermediates are not run; only the data folders it checks for when it loads are kept.
RUN cd node_modules/gdal-async && for d in libgdal/gdal/data libproj/proj/data libgdal/gdal/frmts/grib/data; do \
      mkdir -p "keep/$(dirname "$d")" && mv "deps/$d" "keep/$d"; done \
  && rm -rf deps build src doc && mv keep deps

FROM ${BASE}
WORKDIR /opt/tessera
COPY scripts/install.sh scripts/node.sh scripts/
# Node's headers and npm only serve builds (done in the build stage).
RUN TESSERA_INSTALL=runtime bash scripts/install.sh && apt-get clean && rm -rf /var/lib/apt/lists/* \
  && rm -rf .tools/node/include .tools/node/lib/node_modules/npm .tools/node/bin/npm .tools/node/bin/npx \
  && useradd --uid 10001 --user-group --home-dir /opt/tessera --no-create-home --shell /usr/sbin/nologin tessera
COPY package.json ./
COPY bin bin
COPY src/api/pages/static src/api/pages/static
COPY --from=build /opt/tessera/node_modules node_modules
COPY --from=build /opt/tessera/dist dist
# The image fails to build if GDAL or sharp do not load here.
RUN bin/tessera serve --help >/dev/null && .tools/node/bin/node -e "require('gdal-async'); require('sharp')"

USER tessera
ENV TESSERA_HOST=0.0.0.0 \
    TESSERA_PORT=8000 \
    TESSERA_LOG_LEVEL=info
EXPOSE 8000
# Node itself asks /readyz (no curl in the image); it answers 503 from the moment shutdown begins.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/opt/tessera/.tools/node/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.TESSERA_PORT||8000)+'/readyz').then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["bin/tessera", "serve"]
