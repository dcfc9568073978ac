# A Cairn agent in a container: the cairn CLI and terraform, nothing else. From a checkout:
#   npm run pack && docker build -f deploy/agent.Dockerfile -t cairn-agent .
# then run it with an agent token (docs/runs.md):
#   docker run -d -e CAIRN_AGENT_TOKEN=... cairn-agent agent --server https://cairn.example.com
FROM node:20-bookworm-slim
ARG TERRAFORM_VERSION=1.11.4
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates curl unzip git \
  && curl -fsSLo /tmp/terraform.zip \
    "https://releases.hashicorp.com/terraform/${TERRAFORM_VERSION}/terraform_${TERRAFORM_VERSION}_linux_amd64.zip" \
  && unzip /tmp/terraform.zip -d /usr/local/bin terraform \
  && rm /tmp/terraform.zip \
  && apt-get purge -y curl unzip && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*
COPY dist-packages/cairn-cli-*.tgz /tmp/
RUN npm install -g /tmp/cairn-cli-*.tgz && rm /tmp/cairn-cli-*.tgz
USER node
ENTRYPOINT ["cairn"]
CMD ["agent", "--help"]
