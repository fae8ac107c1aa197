/// Which route takes a request (`Router.match`), found once per request
/// and carried: the gates' refusals are labelled with it, a preflight
/// reads its methods, the router runs its handler.
struct RouteMatch: Sendable {
    /// The index of the route whose pattern the path matches; nil: none (404).
    let route: Int?
    /// The index of that route's handler for the method; nil: none (405).
    let method: Int?
    /// Percent-decoded values of the pattern's `{...}` segments.
    let parameters: [String?]
    /// What the answers carry for metrics: `GET /pattern` when a handler
    /// matched, the pattern when only the path did, else `unmatched`.
    let label: String
}
