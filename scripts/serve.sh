#!/usr/bin/env bash
# make serve: production serving on one host. Debian's nginx faces the clients
# (config/nginx.conf: whole requests only, slow clients closed after
# SERVE_CLIENT_TIMEOUT) and passes whole requests to gunicorn (config/gunicorn.conf.py),
# which listens on 127.0.0.1 only. TLS is the deployment's own (docs/deployment.md).
#   SERVE_ADDRESS          where nginx listens            (127.0.0.1:8000)
#   SERVE_APP_ADDRESS      where gunicorn listens, behind (127.0.0.1:8001)
#   SERVE_CLIENT_TIMEOUT   seconds for a whole header     (10)
#   SERVE_RUNTIME          nginx's pid, logs, temp files  (var/serve)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
NGINX=${NGINX_PATH:-/usr/sbin/nginx}
LISTEN=${SERVE_ADDRESS:-127.0.0.1:8000}
APP=${SERVE_APP_ADDRESS:-127.0.0.1:8001}
RUNTIME=$(realpath -m "${SERVE_RUNTIME:-var/serve}")
bash scripts/ensure_nginx.sh
[ -x "$NGINX" ] || { echo "make serve needs nginx ($NGINX)" >&2; exit 1; }
mkdir -p "$RUNTIME"
chmod 755 "$RUNTIME"
limits=$("$PY" -c 'import django, math, os; os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings"); django.setup(); from django.conf import settings; print(settings.REQUEST_BODY_MAX_BYTES, math.ceil(settings.BOOKING_REQUEST_DEADLINE) + 2)')
read -r body_max upstream_timeout <<< "$limits"  # nginx waits a deadline and a margin
sed -e "s#@RUNTIME@#$RUNTIME#g" -e "s#@LISTEN@#$LISTEN#g" -e "s#@UPSTREAM@#$APP#g" \
    -e "s#@CLIENT_TIMEOUT@#${SERVE_CLIENT_TIMEOUT:-10}#g" -e "s#@BODY_MAX@#$body_max#g" \
    -e "s#@UPSTREAM_TIMEOUT@#$upstream_timeout#g" \
    config/nginx.conf > "$RUNTIME/nginx.conf"
"$NGINX" -t -q -c "$RUNTIME/nginx.conf"
# nginx is the only proxy in front: the client's address is its X-Forwarded-For entry.
export TRUSTED_PROXY_COUNT=${TRUSTED_PROXY_COUNT:-1} GUNICORN_BIND=$APP
# The front door opens when the app is warm: nginx starts once every gunicorn worker has
# warmed up (config/gunicorn.conf.py's post_worker_init marks it in $GUNICORN_WARM_DIR),
# so the first people are not queued behind workers still starting (or refused by the
# listen backlog meanwhile). After SERVE_WARM_TIMEOUT seconds it opens anyway, saying so.
export GUNICORN_WARM_DIR="$RUNTIME/warm"
rm -rf "$GUNICORN_WARM_DIR" && mkdir -p "$GUNICORN_WARM_DIR"
workers=$("$PY" -c 'import runpy; print(runpy.run_path("config/gunicorn.conf.py")["workers"])')
"$PY" -m gunicorn -c config/gunicorn.conf.py &
app=$!
trap 'kill -TERM $app 2>/dev/null; wait' INT TERM EXIT
waited=0
until [ "$(ls "$GUNICORN_WARM_DIR" | wc -l)" -ge "$workers" ]; do
    kill -0 $app 2>/dev/null || { wait $app; exit $?; }
    if [ "$waited" -ge "$(( ${SERVE_WARM_TIMEOUT:-60} * 10 ))" ]; then
        echo "Not every worker warmed up within ${SERVE_WARM_TIMEOUT:-60} s; serving anyway." >&2
        break
    fi
    sleep 0.1
    waited=$((waited + 1))
done
"$NGINX" -c "$RUNTIME/nginx.conf" &
proxy=$!
trap 'kill -TERM $app $proxy 2>/dev/null; wait' INT TERM EXIT
echo "Serving on http://$LISTEN/ (nginx) -> gunicorn on $APP"
wait -n $app $proxy
