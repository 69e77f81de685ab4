set -e
PGC=$(ls -d /usr/lib/postgresql/*/bin/pg_config | head -1)
cd /build/braidsort && make -s -j2 PG_CONFIG=$PGC && make -s install PG_CONFIG=$PGC
rm -rf /tmp/rtm && mkdir -p /tmp/rtm/dax /tmp/rtm/tinydax && cp -r /build/braidsort /tmp/rtm/src
mount -t tmpfs -o size=1G tmpfs /tmp/rtm/dax
mount -t tmpfs -o size=2M tmpfs /tmp/rtm/tinydax
chown -R postgres /tmp/rtm
runuser -u postgres -- env BRAID_TEST_DAX=/tmp/rtm/dax BRAID_TEST_TINY_DAX=/tmp/rtm/tinydax make -C /tmp/rtm/src -s installcheck PG_CONFIG=$PGC REGRESS="setup types plans exec_contract mergepass wlimit join offload valuelog threads keys_property collations adaptive sched monitor majors" ISOLATION= PROVE_TESTS="test/t/018_shared_cancel.pl" || rc=$?
cat /tmp/rtm/src/regression.diffs 2>/dev/null | head -80
umount /tmp/rtm/dax /tmp/rtm/tinydax
exit ${rc:-0}
