import HTTPCore

/// Before an `inbox` run: its first user must have conversations, else
/// every virtual user would walk an empty inbox and the run would measure
/// nothing. Said once, with the fix, instead of a report of empty pages.
enum InboxPreflight {
    static func check(_ plan: LoadPlan, authorization: String?) throws {
        let user = plan.settings.inboxUser(ofUser: 0).id
        let connection = try HTTPClientConnection(host: plan.endpoint.host, port: plan.endpoint.port, timeout: .seconds(30))
        defer { connection.close() }
        var headers = HTTPHeaders()
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        let target = "/v1/users/\(user)/conversations?limit=1"
        let response = try connection.request(HTTPRequest(method: .get, target: target, headers: headers))
        guard response.status == 200 else {
            throw LoadError("GET \(target) answered \(response.status) \(BodyScan.errorCode(response.body) ?? ""): "
                            + "does \(plan.endpoint) serve the inbox?")
        }
        var summary = InboxSummary()
        try summary.scan(response.body)
        guard !summary.rows.isEmpty else {
            throw LoadError("\(user) is a member of no conversation on \(plan.endpoint): "
                            + "seed with `history-load seed --add-members` (or with keys) first")
        }
    }
}
