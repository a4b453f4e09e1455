#!/bin/bash
# docker-entrypoint-initdb.d hook, sourced by the official mariadb image at first
# start after 20-*.sql: sets the tier's shape of a server of a region (schema/
# 30-shape.sql.in) from IDGEN_TIER_INCREMENT, IDGEN_SERVER_OFFSET, IDGEN_REGION and
# IDGEN_REGION_BITS, as scripts/dbpair.sh does locally (docker-compose.regions.yml).
sed -e "s/@TIER_INCREMENT@/${IDGEN_TIER_INCREMENT:?IDGEN_TIER_INCREMENT must be set}/" \
	-e "s/@SERVER_OFFSET@/${IDGEN_SERVER_OFFSET:?IDGEN_SERVER_OFFSET must be set}/" \
	-e "s/@REGION@/${IDGEN_REGION:?IDGEN_REGION must be set}/" \
	-e "s/@REGION_BITS@/${IDGEN_REGION_BITS:?IDGEN_REGION_BITS must be set}/" \
	/idgen/schema/30-shape.sql.in | docker_process_sql
