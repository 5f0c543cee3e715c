package catalog

import (
	"bytes"
	"context"
	"encoding/hex"
	"slices"
	"strconv"

	"shoal"
)

// Schema version 3: every entry row carries a copy of its replicas in
// entries.replica_list, so that a Stat reads one row of one table. The
// LEFT JOIN on replicas it replaces cost MariaDB about a third of its stat
// throughput (16 connections, 100,000 inline files: ~24k stats/s with the
// join, ~31-35k reading the entry row alone), although the files it was
// probing for replicas had none.
//
// The replicas table stays the record that is searched by server and
// object (garbage, WalkReplicas, ReplaceReplica); replica_list is written
// in the same transaction as every change to an entry's replica rows (see
// setReplicaList and its callers), so the two never disagree once
// committed. The migration fills the list of existing entries in SQL, in
// the same format as encodeReplicaList (MariaDB's GROUP_CONCAT stops at
// group_concat_max_len, 1 MiB by default: thousands of replicas, far more
// than any layout has shards).
//
// Upgrades: an md of an older version that is still running when this
// version is applied writes replica rows without the list (new files would
// show no replicas, overwritten ones their old replicas): stop older md
// processes before starting this one on a shared catalog. Older binaries
// refuse to open the migrated catalog (version check at Open).
var (
	mysqlReplicaListV3 = []string{
		`ALTER TABLE entries ADD COLUMN replica_list BLOB`,
		`UPDATE entries e SET replica_list = (
			SELECT GROUP_CONCAT(CONCAT(HEX(r.server), ':', HEX(r.object), ':', r.shard, ':', r.size, ':', r.sum)
				ORDER BY r.shard, r.id SEPARATOR ',')
			FROM replicas r WHERE r.entry_id = e.id)
		WHERE e.id IN (SELECT entry_id FROM replicas)`,
	}
	sqliteReplicaListV3 = []string{
		`ALTER TABLE entries ADD COLUMN replica_list BLOB`,
		`UPDATE entries SET replica_list = (
			SELECT group_concat(hex(r.server) || ':' || hex(r.object) || ':' || r.shard || ':' || r.size || ':' || r.sum,
				',' ORDER BY r.shard, r.id)
			FROM replicas r WHERE r.entry_id = entries.id)
		WHERE id IN (SELECT entry_id FROM replicas)`,
	}
)

// encodeReplicaList is the replica_list of reps: per replica
// HEX(server):HEX(object):shard:size:sum, joined by ",", ordered by shard
// (stable, so plain replicas keep their order); nil (SQL NULL) when there
// are none. Hex keeps separators out of server and object names.
func encodeReplicaList(reps []shoal.Replica) []byte {
	if len(reps) == 0 {
		return nil
	}
	reps = slices.Clone(reps)
	sortReplicas(reps)
	var b []byte
	for i, r := range reps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendUpperHex(b, r.Server)
		b = append(b, ':')
		b = appendUpperHex(b, r.Object)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(r.Shard), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, r.Size, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(r.Sum), 10)
	}
	return b
}

// appendUpperHex hex-encodes s as SQL's HEX() does (upper case), so that a
// list written here and one filled by the migration are the same bytes.
func appendUpperHex(b []byte, s string) []byte {
	const digits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return b
}

// decodeReplicaList reads a replica_list; empty or NULL is no replicas.
func decodeReplicaList(b []byte) ([]shoal.Replica, error) {
	if len(b) == 0 {
		return nil, nil
	}
	reps := make([]shoal.Replica, 0, bytes.Count(b, []byte{','})+1)
	for len(b) > 0 {
		var item []byte
		item, b, _ = bytes.Cut(b, []byte{','})
		var f [5][]byte
		for i := range f {
			var ok bool
			f[i], item, ok = bytes.Cut(item, []byte{':'})
			if ok != (i < 4) {
				return nil, shoal.Errorf("catalog", shoal.KindCorrupt, "replica_list: want 5 fields per replica")
			}
		}
		server, err1 := hexString(f[0])
		object, err2 := hexString(f[1])
		shard, err3 := strconv.Atoi(string(f[2]))
		size, err4 := strconv.ParseInt(string(f[3]), 10, 64)
		sum, err5 := strconv.ParseUint(string(f[4]), 10, 32)
		if err := firstErr(err1, err2, err3, err4, err5); err != nil {
			return nil, shoal.E("catalog", shoal.KindCorrupt, err)
		}
		reps = append(reps, shoal.Replica{Server: server, Object: object, Shard: shard, Size: size, Sum: uint32(sum)})
	}
	return reps, nil
}

func hexString(h []byte) (string, error) {
	b := make([]byte, hex.DecodedLen(len(h)))
	if _, err := hex.Decode(b, h); err != nil {
		return "", err
	}
	return string(b), nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// setReplicaList rewrites entry id's replica_list from its replica rows,
// inside t: for changes made to the rows in SQL (a replaced replica).
func (t *tx) setReplicaList(ctx context.Context, id int64) error {
	reps, err := t.replicaRows(ctx, id)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `UPDATE entries SET replica_list = ? WHERE id = ?`, encodeReplicaList(reps), id)
	return err
}

// replicaRows reads entry id's replica rows ordered by shard, then id.
func (t *tx) replicaRows(ctx context.Context, id int64) ([]shoal.Replica, error) {
	rows, err := t.query(ctx, `SELECT server, object, shard, size, sum FROM replicas WHERE entry_id = ? ORDER BY shard, id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var reps []shoal.Replica
	for rows.Next() {
		var r shoal.Replica
		var sum int64
		if err := rows.Scan(&r.Server, &r.Object, &r.Shard, &r.Size, &sum); err != nil {
			return nil, err
		}
		r.Sum = uint32(sum)
		reps = append(reps, r)
	}
	return reps, rows.Err()
}
