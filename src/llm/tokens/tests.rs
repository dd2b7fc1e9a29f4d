use super::*;
use crate::llm::{Response, StopReason, Usage};
use serde_json::json;

fn text_message(role: Role, text: &str) -> Message {
    Message {
        role,
        content: vec![Block::Text { text: text.into() }],
    }
}

fn request(model: &str, messages: Vec<Message>) -> Request {
    Request {
        model: model.into(),
        max_tokens: 10,
        system: String::new(),
        tools: vec![],
        messages,
    }
}

#[test]
fn model_names_pick_their_tokenizer() {
    let o200k = Tokenizer::Bpe(Encoding::O200kBase);
    let cl100k = Tokenizer::Bpe(Encoding::Cl100kBase);
    for model in [
        "gpt-4o",
        "gpt-4o-mini-2024-07-18",
        "gpt-4.1-nano",
        "GPT-5",
        "o1-mini",
        "o3",
        "o4-mini",
        "openai/gpt-4o",
        "gpt-oss-20b",
    ] {
        assert_eq!(Tokenizer::for_model(model), o200k, "{model}");
    }
    for model in ["gpt-4", "gpt-4-turbo", "gpt-3.5-turbo-0125"] {
        assert_eq!(Tokenizer::for_model(model), cl100k, "{model}");
    }
    assert_eq!(
        Tokenizer::for_model("claude-sonnet-4-5"),
        Tokenizer::Calibrated { claude: true }
    );
    for model in ["qwen3:8b", "smol", "llama3.2", "mistral-small", "m", ""] {
        assert_eq!(
            Tokenizer::for_model(model),
            Tokenizer::Calibrated { claude: false },
            "{model}"
        );
    }
}

#[test]
fn preloading_loads_the_tokenizer_and_leaves_counts_as_they_are() {
    // The preload's own thread reports the encoder loaded; a calibrated model starts none.
    let handle = preload("gpt-4o").expect("gpt-4o has a tokenizer to preload");
    assert!(
        handle.join().unwrap(),
        "the preload thread did not load o200k_base"
    );
    assert!(bpe::is_loaded(bpe::Encoding::O200kBase));
    assert!(preload("claude-sonnet-4-5").is_none());
    assert_eq!(estimate_text("gpt-4o", "hello world"), 2);
}

#[test]
fn openai_models_count_text_exactly() {
    assert_eq!(estimate_text("gpt-4o", "hello world"), 2);
    assert_eq!(estimate_text("gpt-4", "tiktoken is great!"), 6);
    assert_eq!(estimate_text("gpt-4o", ""), 0);
}

#[test]
fn a_request_adds_openai_framing_to_its_messages() {
    // The cookbook's count for [system, user] chat messages: 3 per message + role + content,
    // and 3 to prime the reply.
    let mut chat = request(
        "gpt-4o",
        vec![text_message(Role::User, "What is in my garden note?")],
    );
    chat.system = "You help with notes.".into();
    let content = estimate_text("gpt-4o", "What is in my garden note?")
        + estimate_text("gpt-4o", "You help with notes.");
    assert_eq!(estimate_request(&chat), content + 2 * (3 + 1) + 3);
}

#[test]
fn each_tool_result_is_framed_as_a_message_of_its_own() {
    let result = |id: &str| Block::ToolResult {
        tool_use_id: id.into(),
        content: vec![ResultPart::Text {
            text: "a note".into(),
        }],
        is_error: false,
    };
    let two_results = Message {
        role: Role::User,
        content: vec![result("a"), result("b")],
    };
    let one_result = Message {
        role: Role::User,
        content: vec![result("a")],
    };
    let framing = 4;
    assert_eq!(
        estimate_message("gpt-4o", &two_results) - estimate_message("gpt-4o", &one_result),
        estimate_text("gpt-4o", "a note") + framing
    );
}

#[test]
fn tool_definitions_count_as_the_openai_cookbook_does() {
    let tool = ToolDef {
        name: "get_weather".into(),
        description: "Get the weather.".into(),
        input_schema: json!({"type": "object", "properties": {
            "city": {"type": "string", "description": "The city"},
            "units": {"type": "string", "enum": ["c", "f"]}
        }}),
    };
    let count = |t: &str| estimate_text("gpt-4o", t);
    let expected = 7
        + count("get_weather:Get the weather")
        + 3
        + (3 + count("city:string:The city"))
        + (3 + count("units:string:") - 3 + (3 + count("c")) + (3 + count("f")))
        + 12;
    let mut with_tool = request("gpt-4o", vec![]);
    with_tool.tools = vec![tool.clone()];
    assert_eq!(
        estimate_request(&with_tool) - estimate_request(&request("gpt-4o", vec![])),
        expected
    );
    // Claude pays its tool-use system prompt on top of the definitions.
    let mut claude = request("claude-sonnet-4-5", vec![]);
    let bare = estimate_request(&claude);
    claude.tools = vec![tool];
    assert!(estimate_request(&claude) - bare > 346);
}

#[test]
fn the_calibrated_estimate_counts_cjk_per_character() {
    let japanese = "日本語のノートです。検索できるかどうか確認します。";
    let bytes = japanese.len() as u64;
    let estimate = estimate_text("smol", japanese);
    // 25 characters, 75 bytes: about a token per character, far from bytes ÷ 4 ≈ 19.
    assert!((20..=27).contains(&estimate), "{estimate}");
    assert!(estimate > bytes / 4);
}

#[test]
fn images_count_a_flat_amount() {
    let image = Message {
        role: Role::User,
        content: vec![Block::Image {
            media_type: "image/png".into(),
            data: "AAAA".repeat(10_000),
        }],
    };
    assert_eq!(estimate_message("m", &image), IMAGE_TOKENS + 5);
}

fn response(content: Vec<Block>, usage: Usage) -> Response {
    Response {
        content,
        stop_reason: StopReason::EndTurn,
        stop_details: None,
        usage,
        request_id: None,
    }
}

#[test]
fn unreported_usage_is_estimated_and_marked() {
    let asked = request("smol", vec![text_message(Role::User, "Say hello to me.")]);
    let mut answered = response(
        vec![Block::Text {
            text: "Hello, welcome to the world of science fiction!".into(),
        }],
        Usage::default(),
    );
    estimate_missing_usage(&asked, &mut answered);
    assert!(answered.usage.estimated);
    assert_eq!(answered.usage.input_tokens, estimate_request(&asked));
    assert_eq!(
        answered.usage.output_tokens,
        estimate_text("smol", "Hello, welcome to the world of science fiction!")
    );
    assert!(answered.usage.input_tokens > 5 && answered.usage.output_tokens > 5);
}

#[test]
fn reported_usage_is_kept_and_not_marked() {
    let asked = request("gpt-4o", vec![text_message(Role::User, "hi")]);
    let reported = Usage {
        input_tokens: 3,
        output_tokens: 1,
        cache_read_input_tokens: 1000,
        ..Usage::default()
    };
    let mut answered = response(vec![Block::Text { text: "Hi".into() }], reported);
    estimate_missing_usage(&asked, &mut answered);
    assert_eq!(answered.usage, reported);
    assert!(!answered.usage.estimated);
}

#[test]
fn only_the_missing_half_is_estimated() {
    let asked = request("gpt-4o", vec![text_message(Role::User, "hi")]);
    let prompt_only = Usage {
        input_tokens: 42,
        ..Usage::default()
    };
    let mut answered = response(vec![Block::Text { text: "Hi".into() }], prompt_only);
    estimate_missing_usage(&asked, &mut answered);
    assert_eq!(answered.usage.input_tokens, 42);
    assert_eq!(answered.usage.output_tokens, 1);
    assert!(answered.usage.estimated);
    // An empty reply really is no output: only the prompt is filled in.
    let mut empty = response(vec![], Usage::default());
    estimate_missing_usage(&asked, &mut empty);
    assert_eq!(empty.usage.output_tokens, 0);
    assert!(empty.usage.input_tokens > 0 && empty.usage.estimated);
}

#[test]
fn a_sum_with_one_estimated_part_is_estimated() {
    let mut turn = Usage {
        input_tokens: 10,
        ..Usage::default()
    };
    turn.add(&Usage {
        input_tokens: 5,
        estimated: true,
        ..Usage::default()
    });
    turn.add(&Usage::default());
    assert!(turn.estimated);
    assert_eq!(turn.input_tokens, 15);
}

#[test]
fn usage_without_the_mark_reads_as_reported() {
    let old: Usage = serde_json::from_str(
        r#"{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}"#,
    )
    .unwrap();
    assert!(!old.estimated);
}
