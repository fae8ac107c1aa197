/// The fingerprint kept beside a `client_id`: FNV-1a 64 of
/// `sender + "\0" + body`, stored as the signed bit pattern (an SQLite
/// INTEGER, a PostgreSQL bigint). A retry is recognised by it even after the
/// message was edited or tombstoned, since the fingerprint is of what was
/// first posted; both stores compute it here, so a database moved from one
/// to the other keeps recognising retries.
package enum ClientFingerprint {
    package static func of(sender: String, body: String) -> Int64 {
        var hasher = FNV1a64()
        hasher.combine(sender.utf8)
        hasher.combine(CollectionOfOne(UInt8(0)))
        hasher.combine(body.utf8)
        return Int64(bitPattern: hasher.value)
    }
}
