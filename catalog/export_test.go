package catalog

// ReadPoolSize is the read pool's connection limit, for tests.
func (db *DB) ReadPoolSize() int { return db.read.Stats().MaxOpenConnections }
