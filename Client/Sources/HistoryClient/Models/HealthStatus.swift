/// The body of `GET /healthz`: `{"status":"ok"}` when the store answers.
public struct HealthStatus: Codable, Hashable, Sendable {
    public var status: String

    public init(status: String) {
        self.status = status
    }

    /// True when the server said its store answers.
    public var isOK: Bool { status == "ok" }
}
