import HTTPCore

/// CORS for the listed origins (`BrowserSafety`), on a server that lists
/// some: a listed origin's answers carry `Access-Control-*`, its
/// preflights (`OPTIONS`, which carry no token by design) are answered
/// here, 204 or 404 for a path no route takes; every answer varies by
/// `Origin`.
final class CORSGate: RequestGate {
    let browser: BrowserSafety
    /// For the methods a preflighted path takes.
    let router: Router

    init(browser: BrowserSafety, router: Router) {
        self.browser = browser
        self.router = router
    }

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        guard let origin = browser.listedOrigin(of: passage.request) else {
            passage.marks.variesByOrigin = true
            return nil
        }
        passage.marks.corsOrigin = origin
        guard passage.request.method == .options else { return nil }
        guard let (methods, pattern) = router.methods(of: passage.route) else {
            return passage.refusal(APIError.notFound(abbreviated(String(passage.path), to: 200)))
        }
        return BrowserSafety.preflight(methods: methods, route: "OPTIONS \(pattern)")
    }

    func decorate(_ response: inout HTTPResponse, marks: AnswerMarks) {
        if let origin = marks.corsOrigin {
            BrowserSafety.addCORSHeaders(origin: origin, to: &response)
        } else if marks.variesByOrigin {
            BrowserSafety.addVaryOrigin(to: &response)
        }
    }
}
