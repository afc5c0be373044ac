package carryon

// Storage kinds: what GET /v1/sessions/{id}/storage and carryon stats count, each with its rows
// and bytes.
const (
	// StorageMessages is the session's own messages (those a fork inherits are its parent's),
	// summaries left out.
	StorageMessages = "messages"
	// StorageCompactions is the session's own messages of kind summary (its compactions).
	StorageCompactions = "compactions"
	// StorageMemoryRevisions is the history of the session's working memory.
	StorageMemoryRevisions = "memory_revisions"
	// StorageRuns is the session's runs.
	StorageRuns = "runs"
	// StorageEvents is the stream events of the session's runs.
	StorageEvents = "events"
	// StorageJournal is the tool journal of the session's runs (actions).
	StorageJournal = "journal"
	// StorageRequestIDs is the request ids (idempotency keys) stored with the session, and their
	// answers.
	StorageRequestIDs = "request_ids"
	// StorageSearchIndex is the session's documents in the session search index (one per message
	// it shows, inherited ones included).
	StorageSearchIndex = "search_index"
	// StorageWorkspaceFiles is the regular files of the session's workspace directory.
	StorageWorkspaceFiles = "workspace_files"
	// StorageLongTerm is a user's long-term memory items and their earlier versions (per user
	// only: carryon stats).
	StorageLongTerm = "long_term"
)

// StorageUse is what one kind of stored thing takes. Bytes is the length of the stored text
// and data of its rows (contents, documents, arguments, results, answers; for the search index
// what the database keeps of its documents; for workspace files their sizes), not the space of
// pages and indexes, which a database does not split by session or user.
type StorageUse struct {
	Kind  string `json:"kind"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// SessionStorage is what one session takes, kind by kind (GET /v1/sessions/{id}/storage), read
// in one read transaction (workspace files after it: they are not versioned). Rows and Bytes
// are the sums of its kinds.
type SessionStorage struct {
	SessionID string       `json:"session_id"`
	Kinds     []StorageUse `json:"kinds"`
	Rows      int64        `json:"rows"`
	Bytes     int64        `json:"bytes"`
}

// Total sets Rows and Bytes to the sums of Kinds.
func (s *SessionStorage) Total() {
	s.Rows, s.Bytes = 0, 0
	for _, k := range s.Kinds {
		s.Rows += k.Rows
		s.Bytes += k.Bytes
	}
}
