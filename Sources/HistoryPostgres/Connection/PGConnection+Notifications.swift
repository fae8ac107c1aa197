import CLibPQ

/// A `NOTIFY` received on a connection that ran `LISTEN channel`.
public struct PGNotification: Sendable, Hashable {
    public let channel: String
    public let payload: String
    /// The backend (`pg_backend_pid()`) of the session that sent it.
    public let senderPID: Int32

    public init(channel: String, payload: String, senderPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderPID = senderPID
    }
}

extension PGConnection {
    /// Reads whatever the server has sent, without blocking: call it when
    /// `socketDescriptor` is readable (a Dispatch read source on it), then
    /// take the notifications with `nextNotification()`.
    ///
    /// Why not a blocking wait: a listening connection exists to wake
    /// parked requests, and a thread parked on its socket would be a thread
    /// per instance doing nothing; a Dispatch source costs none.
    /// - Throws: `.connectionLost` when the connection broke: the listener
    ///   must reconnect, `LISTEN` again, and wake everyone it serves, since
    ///   notifications sent meanwhile are gone.
    ///
    /// Related PostgreSQL documentation:
    /// <https://www.postgresql.org/docs/current/libpq-notify.html>
    public func consumeInput() throws(PostgresError) {
        guard let handle = rawHandle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(kind: isBroken ? .connectionLost : .client,
                                message: String(cString: PQerrorMessage(handle)))
        }
    }

    /// The next notification already read (by `consumeInput()` or a
    /// statement's result), or nil.
    public func nextNotification() -> PGNotification? {
        guard let handle = rawHandle, let notification = PQnotifies(handle) else { return nil }
        defer { PQfreemem(notification) }
        return PGNotification(channel: String(cString: notification.pointee.relname),
                              payload: String(cString: notification.pointee.extra),
                              senderPID: notification.pointee.be_pid)
    }
}
