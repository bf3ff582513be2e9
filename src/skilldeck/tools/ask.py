"""AskUserQuestion: multiple-choice questions for the user (Claude Code's shape).

The tool does not block. It returns a :class:`~skilldeck.tools.base.PauseRequest`
(``kind="ask_user"``, payload ``{"questions": [...]}``); the loop saves the session
as paused and, when it is resumed with an answer, that answer becomes this call's
tool result. An interactive front end may instead put an async callable in
``ctx.services["ask_user"]`` (``questions -> answer text``): the answer is then
returned at once and nothing pauses.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from skilldeck.tools.base import PauseRequest, Tool, ToolContext, ToolResult

WAITING = "Waiting for the user's answer…"


class QuestionOption(BaseModel):
    label: str = Field(min_length=1, description="The choice shown to the user (1-5 words).")
    description: str = Field(description="What this option means or implies.")


class Question(BaseModel):
    question: str = Field(min_length=1, description="The complete question, ending with '?'.")
    header: str = Field(
        min_length=1, max_length=30, description="A very short label (max 12 chars ideally)."
    )
    options: list[QuestionOption] = Field(
        min_length=2, max_length=4, description="2-4 choices; an 'Other' answer is always allowed."
    )
    multiSelect: bool = Field(default=False, description="Allow choosing several options.")

    @model_validator(mode="after")
    def _unique_labels(self) -> Question:
        labels = [o.label for o in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError(f"option labels must be unique within a question: {labels}")
        return self


class AskUserQuestionInput(BaseModel):
    questions: list[Question] = Field(
        min_length=1, max_length=4, description="1-4 questions to ask the user."
    )

    @model_validator(mode="after")
    def _unique_questions(self) -> AskUserQuestionInput:
        texts = [q.question for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("question texts must be unique")
        return self


class AskUserQuestionTool(Tool):
    name: ClassVar[str] = "AskUserQuestion"
    description: ClassVar[str] = (
        "Asks the user 1-4 multiple-choice questions (2-4 options each; the user may also "
        "answer in their own words) and waits for the answer. Use it to clarify ambiguous "
        "requirements or let the user choose between approaches."
    )
    Input: ClassVar[type[BaseModel]] = AskUserQuestionInput
    read_only: ClassVar[bool] = True

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: AskUserQuestionInput = input
        questions = [q.model_dump() for q in args.questions]
        ask = ctx.services.get("ask_user")
        if ask is not None:
            answer = await ask(questions)
            return ToolResult(content=f"User answered: {answer}", data={"questions": questions})
        return ToolResult(
            content=WAITING,
            data={"questions": questions},
            pause=PauseRequest("ask_user", {"questions": questions}),
        )
