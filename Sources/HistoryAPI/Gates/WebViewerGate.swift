import HTTPCore

/// The web viewer's files (`WebViewer`), answered before any token is
/// asked for: they hold no data. Any other path goes on to the API.
struct WebViewerGate: RequestGate {
    let viewer: WebViewer

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        viewer.response(to: passage.request)
    }
}
