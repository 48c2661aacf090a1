package rewrite

// Signpost's own answer codes: the bodies it writes itself, never a rule's
// (docs/response-contract.md lists each). The 400s its HTTP/1.1 front
// answers to a malformed head have codes of their own, in internal/front.
const (
	// Of an upstream error no rule matched, wrapped.
	CodeRejected    = "upstream_rejected" // a 4xx
	CodeRateLimited = "rate_limited"      // a 429
	CodeFailed      = "upstream_failed"   // a 5xx

	// Of the declared checks.
	CodeValidationFailed = "validation_failed" // a batch of field faults
	CodeInvalidJSON      = "invalid_json_body" // a body that is not one JSON object
	CodeInvalidFormBody  = "invalid_form_body" // a form route's body that is not a form
	CodeInvalidXMLBody   = "invalid_xml_body"  // an XML route's body that is not XML

	// Of an upstream that did not answer.
	CodeUnavailable     = "upstream_unavailable"
	CodeTimeout         = "upstream_timeout"
	CodeInvalidResponse = "upstream_invalid_response"

	// Of the request, and of signpost's own limits.
	CodeCancelled      = "request_cancelled"
	CodeUnreadableBody = "unreadable_request_body"
	CodeBodyTooLarge   = "request_body_too_large"
	CodeBodyTimeout    = "request_body_timeout"
	CodeOverloaded     = "overloaded"
	CodeRequestTarget  = "invalid_request_target"

	// Of the MCP front door.
	CodeInvalidArguments   = "invalid_arguments"
	CodeUnknownTool        = "unknown_tool"
	CodeResponseTooLarge   = "response_too_large"
	CodeUnreadableResponse = "unreadable_response"
	CodeOriginNotAllowed   = "origin_not_allowed"
)

// OwnCodes returns every code above: a rule reusing one could not be told
// from signpost's own answer.
func OwnCodes() []string {
	return []string{CodeRejected, CodeRateLimited, CodeFailed, CodeValidationFailed, CodeInvalidJSON, CodeInvalidFormBody, CodeInvalidXMLBody,
		CodeUnavailable, CodeTimeout, CodeInvalidResponse, CodeCancelled, CodeUnreadableBody,
		CodeBodyTooLarge, CodeBodyTimeout, CodeOverloaded, CodeRequestTarget,
		CodeInvalidArguments, CodeUnknownTool, CodeResponseTooLarge, CodeUnreadableResponse, CodeOriginNotAllowed}
}
