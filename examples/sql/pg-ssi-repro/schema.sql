-- The table faultline's postgres-txn client creates for list-append (examples/sql/pg-driver.ts), the three
-- per-slot append counters that stand in for faultline's key pool (sequences are not transactional and
-- are only touched before BEGIN, so they take no part in SSI), and the log of committed transactions.
CREATE TABLE lists (k integer PRIMARY KEY, v text NOT NULL);
CREATE SEQUENCE slot0;
CREATE SEQUENCE slot1;
CREATE SEQUENCE slot2;
-- One row per committed transaction, written right after its COMMIT returned (pgbench ends the script at
-- a serialization failure, so an aborted transaction never gets here). Micro-op i: f = 1 read, 2 append,
-- 0 none; k its key; x the value appended, or the list read (-1: no row, the empty list).
CREATE TABLE txlog (
  id bigserial PRIMARY KEY,
  client integer NOT NULL,
  pid integer NOT NULL,
  xid text NOT NULL,
  snap text NOT NULL,
  iso text NOT NULL,
  f1 integer NOT NULL, k1 integer NOT NULL, x1 text NOT NULL,
  f2 integer NOT NULL, k2 integer NOT NULL, x2 text NOT NULL,
  f3 integer NOT NULL, k3 integer NOT NULL, x3 text NOT NULL,
  f4 integer NOT NULL, k4 integer NOT NULL, x4 text NOT NULL
);
