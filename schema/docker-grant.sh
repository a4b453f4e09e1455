#!/bin/bash
# docker-entrypoint-initdb.d hook, sourced by the official mariadb image at first
# start after the *.sql files: creates the service user from schema/60-grant.sql.in
# with the password in IDGEN_DB_PASSWORD, as scripts/dbpair.sh does locally.
sed "s/@IDGEN_DB_PASSWORD@/${IDGEN_DB_PASSWORD:?IDGEN_DB_PASSWORD must be set}/" \
	/idgen/schema/60-grant.sql.in | docker_process_sql
