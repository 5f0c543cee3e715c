package wire

// The requests and reports of md's admin endpoints (see the PathAdmin*
// paths). The jobs' reports (shoal.Job.Result) list every problem they
// found as ProblemReplica; while they run, md streams Progress lines (see
// Stream) from what their runner records (JobProgress).

// PoolAddRequest creates a pool or changes its layout.
type PoolAddRequest struct {
	Name   string `json:"name"`
	Layout string `json:"layout"` // replica:N or ec:K+M
}

// PoolSetRequest maps a directory to a pool.
type PoolSetRequest struct {
	Dir  string `json:"dir"`
	Pool string `json:"pool"`
}

// DrainRequest names the server to drain.
type DrainRequest struct {
	Server string `json:"server"`
}

// ScrubRequest bounds the read rate (0: unbounded).
type ScrubRequest struct {
	RateMBps float64 `json:"rate_mb_per_s"`
}

// FsckReport is what fsck found. OK is true when nothing is orphaned or
// missing and every server with data was reachable; queued garbage does
// not count against it.
type FsckReport struct {
	OK          bool            `json:"ok"`
	Servers     int             `json:"servers"`  // servers checked
	Replicas    int64           `json:"replicas"` // replicas the catalog names
	Objects     int64           `json:"objects"`  // objects found on disks
	Garbage     int64           `json:"garbage"`  // on disk and in the garbage queue: removed soon by their server, not a problem
	Orphans     []FsckObject    `json:"orphans"`  // on disk, unknown to the catalog and not queued as garbage
	Missing     []FsckObject    `json:"missing"`  // in the catalog, absent on disk or of the wrong size
	Unreachable []FsckUnreached `json:"unreachable"`
}

// FsckObject is one object fsck reports.
type FsckObject struct {
	Server string `json:"server"`
	Object string `json:"object"`
	Path   string `json:"path,omitempty"` // an entry that references it (missing only)
	Size   int64  `json:"size"`           // on disk (orphans) or expected (missing)
	Found  int64  `json:"found,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// FsckUnreached is a server fsck could not list.
type FsckUnreached struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// RepairReport is what Repair found and did.
type RepairReport struct {
	Files    int              `json:"files"`    // files checked
	Healthy  int              `json:"healthy"`  // with every replica or shard good
	Repaired int              `json:"repaired"` // made whole
	Failed   int              `json:"failed"`   // left degraded (see Problems)
	Problems []ProblemReplica `json:"problems"` // every bad replica or shard, with the action taken
	// ProblemsOmitted counts problems found before a takeover beyond
	// those a checkpoint carries (jobs.maxResumeProblems: 1000).
	ProblemsOmitted int    `json:"problems_omitted,omitempty"`
	Elapsed         string `json:"elapsed"`
}

// DrainReport is what Drain did.
type DrainReport struct {
	Server   string           `json:"server"`
	Moved    int              `json:"moved"`    // replicas and shards moved off
	Passes   int              `json:"passes"`   // walks over the server's replicas
	Left     int              `json:"left"`     // replica rows still on it at the end
	State    string           `json:"state"`    // retired when it holds nothing, else draining
	Problems []ProblemReplica `json:"problems"` // moves that failed in the last pass and stay undone
	Retried  int              `json:"retried"`  // moves that failed in a pass and were tried again in the next
	Elapsed  string           `json:"elapsed"`
}

// ScrubReport is what Scrub read and found; it changes nothing (repair
// does).
type ScrubReport struct {
	Files     int              `json:"files"`
	Replicas  int              `json:"replicas"` // replicas and shards checked
	BytesRead int64            `json:"bytes_read"`
	Bad       int              `json:"bad"` // files with a problem
	Problems  []ProblemReplica `json:"problems"`
	// ProblemsOmitted counts problems found before a takeover beyond
	// those a checkpoint carries (jobs.maxResumeProblems: 1000).
	ProblemsOmitted int     `json:"problems_omitted,omitempty"`
	Elapsed         string  `json:"elapsed"`
	RateMBps        float64 `json:"rate_mb_per_s"` // the bound asked for; 0: none
}

// ProblemReplica is one replica or shard an operation found bad, and
// what was done about it.
type ProblemReplica struct {
	Path    string `json:"path"`
	Layout  string `json:"layout"`
	Server  string `json:"server"`
	Object  string `json:"object"`
	Shard   int    `json:"shard"`
	Problem string `json:"problem"`          // missing, unreachable, corrupt, …
	Action  string `json:"action,omitempty"` // what was done: "rebuilt on ds7", "moved to ds3", or why not
}

// Progress is a snapshot of a long admin operation (fsck, repair, drain,
// scrub), streamed to `shoal admin` while it runs.
type Progress struct {
	Op       string `json:"op"`
	Phase    string `json:"phase,omitempty"` // what it is doing now
	Seq      int64  `json:"seq,omitempty"`   // the phase's number in the job: 1, 2, …
	Done     int64  `json:"done"`            // units done in this phase
	Total    int64  `json:"total,omitempty"` // units in this phase; 0 while unknown
	Unit     string `json:"unit,omitempty"`  // what Done counts: files, objects, replicas
	Bytes    int64  `json:"bytes,omitempty"` // bytes read so far (all phases)
	Problems int64  `json:"problems"`        // problems found so far (all phases)
	Elapsed  int64  `json:"elapsed_ms"`
	// PhaseElapsed is the time in this phase, for an estimate of the rest.
	PhaseElapsed int64 `json:"phase_elapsed_ms"`
}
